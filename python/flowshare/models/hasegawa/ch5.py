r"""Chapter 5: Tahoe and Vegas fluid models on asymmetric links, HTTP/1.0 and 1.1 delays.

Hasegawa (2000), ch. 5 (Eqs 5.1-5.11). Downstream (data) link: rate ``mu_f`` [data
packets/s], buffer ``b_f`` [packets], one-way delay ``tau_f`` [s]; upstream (ACK) link:
``mu_r`` [ACKs/s], ``b_r`` [ACKs], ``tau_r`` [s] (Table 5.1 is authoritative, hasegawa:A32). The
asymmetry factor is :math:`k = \mu_f/\mu_r`. Windows are in packets (the thesis's byte
form divided by ``m``), document sizes in packets (1 Kbyte documents of 1 Kbyte
packets: size in Kbyte = size in packets), times in seconds, throughputs in packets/s.

The fluid model (5.2)-(5.6): per ACK the window grows by ``g`` in slow start (``g = 1``
for Tahoe, ``1/2`` for Vegas's slow slow start, hasegawa:A5) and by ``1/cwnd`` in congestion
avoidance; ACKs return at :math:`\min(cwnd/rtt, \mu_r)` (the ACK-rate cap of the
upstream link); the delivered rate is :math:`\rho = \min(cwnd/rtt, \mu_f)`. Each piece
of the trajectory is integrated in closed form (exponential, linear or square-root
growth), so cycle lengths, mean throughputs and transfer times are exact for the model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import as_float, check_choice, check_nonnegative, check_positive, out

__all__ = [
    "TABLE_5_1",
    "TABLE_5_2",
    "asym_rtt",
    "asymmetry_factor",
    "burst_wmax",
    "http_session_delay",
    "http_transfer_delay",
    "mean_document_delay",
    "mean_throughput",
    "setup_time",
    "tahoe_wmax",
    "transfer_time",
    "vegas_wmax",
]

#: Table 5.1 defaults (packets, packets/s, seconds).
TABLE_5_1: dict[str, float] = {
    "mu_f": 4000.0,
    "mu_r": 1000.0,
    "tau_f": 1e-3,
    "tau_r": 1e-3,
    "b_f": 8.0,
    "b_r": 5.0,
}

#: Table 5.2 (WebStone document mix) as (size in Kbyte, probability); each group's
#: probability is split equally among its sizes (resolution hasegawa:A39).
TABLE_5_2: tuple[tuple[float, float], ...] = tuple(
    (float(size), prob / len(sizes))
    for prob, sizes in (
        (0.40, (2, 3)),
        (0.25, (1, 5)),
        (0.15, (4, 6)),
        (0.05, (7,)),
        (0.04, (8, 9, 10, 11)),
        (0.04, (12, 14, 15, 17, 18)),
        (0.06, (33,)),
        (0.01, (200,)),
    )
    for size in sizes
)

_TCPS = ("tahoe", "vegas")
_LINK = ("mu_f", "mu_r", "tau_f", "tau_r", "b_f", "b_r")


def asym_rtt(mu_f: ArrayLike, mu_r: ArrayLike, tau_f: ArrayLike, tau_r: ArrayLike) -> Any:
    r"""Round-trip time with empty buffers [s] (Eq 5.4): :math:`1/\mu_f + \tau_f + 1/\mu_r + \tau_r`.

    >>> round(asym_rtt(4000, 1000, 1e-3, 1e-3) * 1e3, 6)  # Table 5.1: 3.25 ms
    3.25
    """
    mf, mr = check_positive("mu_f", mu_f), check_positive("mu_r", mu_r)
    tf, tr = check_nonnegative("tau_f", tau_f), check_nonnegative("tau_r", tau_r)
    return out(1 / mf + tf + 1 / mr + tr)


def asymmetry_factor(
    down: ArrayLike, up: ArrayLike, *, packet_bytes: float = 1000.0, ack_bytes: float = 40.0
) -> Any:
    r"""Asymmetry factor :math:`k = \mu_f/\mu_r` in packet units from line rates in bit/s (§5.1).

    >>> asymmetry_factor(16e6, 160e3)  # 2000 data packets/s against 500 ACKs/s
    4.0
    """
    d, u = check_positive("down", down), check_positive("up", up)
    pb, ab = check_positive("packet_bytes", packet_bytes), check_positive("ack_bytes", ack_bytes)
    return out((d / (8 * pb)) / (u / (8 * ab)))


def setup_time(rtt: ArrayLike, *, http: float = 1.0, document: ArrayLike = 1) -> Any:
    r"""Connection set-up time [s] (Eq 5.1).

    :math:`\frac32 rtt` for every HTTP/1.0 document and the first HTTP/1.1 document,
    :math:`\frac12 rtt` for the second and later documents on an HTTP/1.1 connection.

    >>> setup_time(0.004), setup_time(0.004, http=1.1, document=2)
    (0.006, 0.002)
    """
    r = check_nonnegative("rtt", rtt)
    d = as_float(document)
    _check_http(http)
    if np.any((d < 1) | (d != np.floor(d))):
        raise ValueError("document must be a whole number >= 1 (1 = the first document)")
    later = (http == 1.1) & (d > 1)
    return out(np.where(later, 0.5, 1.5) * r)


# --- W_max (Cases 1, 2, 1', 2') -----------------------------------------------------------


def burst_wmax(w_r: ArrayLike, b_f: ArrayLike, *, burst_index: str = "round-robin") -> Any:
    r"""Window at the first downstream overflow when ACK loss makes data bursty (Eq 5.7).

    There are :math:`w_r` bursts in flight, all of one packet when the window reaches
    :math:`W_r`; each congestion-avoidance increment lengthens one burst, and the loss
    comes when a burst reaches :math:`B_f + 1`: :math:`W_{max} = \sum_i b_i` then.

    ``burst_index="round-robin"`` (default): increments go to the bursts in turn, so
    :math:`W_{max} = w_r B_f + 1`. ``burst_index="thesis"``: the increment ``i`` goes to
    burst :math:`j = (i + W + 1) \bmod w_r` as printed; since ``W`` grows with ``i``,
    ``j`` advances by two, so with even :math:`w_r` only half the bursts grow.

    >>> burst_wmax(8, 8), burst_wmax(8, 8, burst_index="thesis")
    (65.0, 37.0)
    """
    check_choice("burst_index", burst_index, ("round-robin", "thesis"))
    wr = check_positive("w_r", w_r)
    bf = check_nonnegative("b_f", b_f)
    if np.any(wr != np.floor(wr)) or np.any(bf != np.floor(bf)):
        raise ValueError("w_r and b_f must be whole numbers of packets")

    def one(n: float, b: float) -> float:
        n, b = int(n), int(b)
        if burst_index == "round-robin":
            return float(n * b + 1) if b >= 1 else float(n)
        bursts = [1] * n
        w = n
        i = 0
        while max(bursts) < b + 1:
            i += 1
            bursts[(i + w + 1) % n] += 1
            w += 1
        return float(w)

    return out(np.vectorize(one, otypes=[float])(wr, bf))


def tahoe_wmax(
    mu_f: ArrayLike = 4000.0,
    mu_r: ArrayLike = 1000.0,
    tau_f: ArrayLike = 1e-3,
    tau_r: ArrayLike = 1e-3,
    b_f: ArrayLike = 8.0,
    b_r: ArrayLike = 5.0,
    *,
    burst_index: str = "round-robin",
) -> Any:
    r"""Tahoe's window at loss [packets], Case 1 or Case 2 (§5.2.2).

    Case 1 (:math:`k \le B_f`): :math:`W_{max} = \mu_f\,rtt + B_f + k B_r` (the printed
    first line, :math:`\mu_f(\tau_f + 1/\mu_f) + B_f + k[\mu_r(\tau_r + 1/\mu_r) + B_r]`,
    is the same number). Case 2 (:math:`k > B_f`): :func:`burst_wmax` with
    :math:`w_r = \lfloor \mu_r\,rtt + B_r \rfloor`.

    >>> tahoe_wmax()  # Table 5.1: 13 + 8 + 4 * 5
    41.0
    >>> tahoe_wmax(mu_f=10000.0)  # k = 10 > B_f: w_r = floor(3.1 + 5) = 8 bursts of up to 8
    65.0
    """
    mf, mr, tf, tr, bf, br = _link(mu_f, mu_r, tau_f, tau_r, b_f, b_r)
    rtt = as_float(asym_rtt(mf, mr, tf, tr))
    k = mf / mr
    case1 = mf * rtt + bf + k * br
    case2 = as_float(burst_wmax(np.floor(mr * rtt + br), np.floor(bf), burst_index=burst_index))
    return out(np.where(k <= bf, case1, case2))


def vegas_wmax(
    mu_f: ArrayLike = 4000.0,
    mu_r: ArrayLike = 1000.0,
    tau_f: ArrayLike = 1e-3,
    tau_r: ArrayLike = 1e-3,
    b_f: ArrayLike = 8.0,
    b_r: ArrayLike = 5.0,
    alpha: ArrayLike = 2.0,
    beta: ArrayLike = 4.0,
    *,
    form: str = "printed",
    burst_index: str = "round-robin",
) -> Any:
    r"""Vegas's converged window (Case 1') or window at loss (Case 2') [packets] (§5.2.2).

    Case 1' (:math:`k \le B_f`), with the downstream queue :math:`q_l = (\alpha+\beta)/2`:
    ``form="printed"`` (default) gives
    :math:`\mu_f(\tau_f + \frac{\alpha+\beta}{2\mu_f}) + \mu_r(\tau_r + B_r/\mu_r)`;
    ``form="consistent"`` (hasegawa:A34) gives :math:`\mu_f(\tau_f + \tau_r + B_r/\mu_r) + (\alpha+\beta)/2`,
    i.e. :math:`cwnd = \mu_f\,rtt` with the rtt of (5.9). Case 2' (:math:`k > B_f`): as
    Tahoe's Case 2.

    >>> vegas_wmax(), vegas_wmax(form="consistent")  # 4 + 3 + 1 + 5; 4000 * 7 ms + 3
    (13.0, 31.0)
    """
    check_choice("form", form, ("printed", "consistent"))
    mf, mr, tf, tr, bf, br = _link(mu_f, mu_r, tau_f, tau_r, b_f, b_r)
    a, b = check_nonnegative("alpha", alpha), check_nonnegative("beta", beta)
    if np.any(b < a):
        raise ValueError("beta must be >= alpha")
    q = (a + b) / 2
    if form == "printed":
        case1 = mf * tf + q + mr * tr + br
    else:
        case1 = mf * (tf + tr + br / mr) + q
    case2 = as_float(tahoe_wmax(mf, mr, tf, tr, bf, br, burst_index=burst_index))
    return out(np.where(mf / mr <= bf, case1, case2))


# --- the fluid trajectory -------------------------------------------------------------------


def _piece(
    a: float, x: float, ss: bool, ack_capped: bool, rho_capped: bool, p: dict[str, float]
) -> tuple[float, float]:
    """Time [s] and packets delivered while the window grows from ``a`` to ``x`` in one regime."""
    rtt, mu_r, mu_f, g = p["rtt"], p["mu_r"], p["mu_f"], p["g"]
    if ss and not ack_capped:  # dcwnd/dt = g cwnd / rtt
        dt = rtt / g * math.log(x / a)
        area = rtt / g * (x - a)  # integral of cwnd dt
    elif ss:  # dcwnd/dt = g mu_r
        dt = (x - a) / (g * mu_r)
        area = (x * x - a * a) / (2 * g * mu_r)
    elif not ack_capped:  # dcwnd/dt = 1 / rtt
        dt = (x - a) * rtt
        area = (x * x - a * a) * rtt / 2
    else:  # dcwnd/dt = mu_r / cwnd
        dt = (x * x - a * a) / (2 * mu_r)
        area = (x**3 - a**3) / (3 * mu_r)
    return dt, (mu_f * dt if rho_capped else area / rtt)


_Piece = tuple[float, float, tuple[bool, bool, bool], float, float]


def _pieces(c0: float, ssth: float, w_end: float, p: dict[str, float]) -> list[_Piece]:
    """The trajectory from ``c0`` to ``w_end`` cut where a regime changes: (a, b, flags, dt, packets)."""
    rtt = p["rtt"]
    cuts = sorted({c0, w_end, *(v for v in (ssth, rtt * p["mu_r"], rtt * p["mu_f"]) if c0 < v < w_end)})
    pieces = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        mid = (a + b) / 2
        flags = (mid < ssth, mid / rtt > p["mu_r"], mid / rtt > p["mu_f"])
        dt, pk = _piece(a, b, *flags, p)
        pieces.append((a, b, flags, dt, pk))
    return pieces


def _within(pieces: list[_Piece], packets: float, p: dict[str, float]) -> float:
    """Time to deliver ``packets`` (no more than the pieces hold) along ``pieces``."""
    t = 0.0
    for a, b, flags, dt, pk in pieces:
        if packets <= pk:
            if packets <= 0:
                return t
            lo, hi = a, b
            for _ in range(200):  # bisection on the window reached; packets(a, x) increases in x
                mid = (lo + hi) / 2
                if _piece(a, mid, *flags, p)[1] < packets:
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-13 * max(1.0, hi):
                    break
            else:  # pragma: no cover - 200 halvings always reach the tolerance
                raise RuntimeError("transfer-time bisection did not converge")
            return t + _piece(a, hi, *flags, p)[0]
        packets -= pk
        t += dt
    return t


class _Trajectory:
    """One transfer from cwnd = 1: a first cycle, then identical cycles (or a steady rate)."""

    def __init__(self, tcp: str, link: dict[str, float], alpha: float, beta: float, *, vegas_form: str,
                 burst_index: str, initial_ssth: float | None, dead_time: float) -> None:
        mf, mr = link["mu_f"], link["mu_r"]
        self.p = {"rtt": float(asym_rtt(mf, mr, link["tau_f"], link["tau_r"])), "mu_r": mr, "mu_f": mf,
                  "g": 1.0 if tcp == "tahoe" else 0.5}
        args = [link[k] for k in _LINK]
        if tcp == "tahoe":
            self.w = float(tahoe_wmax(*args, burst_index=burst_index))
        else:
            self.w = float(vegas_wmax(*args, alpha, beta, form=vegas_form, burst_index=burst_index))
        if self.w <= 1:
            raise ValueError(f"the window at loss must exceed 1 packet (got {self.w:g})")
        self.converges = tcp == "vegas" and mf / mr <= link["b_f"]  # Case 1': no loss
        self.dead = dead_time
        if self.converges:
            self.first = _pieces(1.0, math.inf, self.w, self.p)
            self.cycle: list[Any] = []
        else:
            ssth0 = self.w / 2 if initial_ssth is None else initial_ssth
            self.first = _pieces(1.0, ssth0, self.w, self.p)
            self.cycle = _pieces(1.0, self.w / 2, self.w, self.p)
        self.first_t = sum(x[3] for x in self.first)
        self.first_pk = sum(x[4] for x in self.first)
        self.cycle_t = sum(x[3] for x in self.cycle) + self.dead
        self.cycle_pk = sum(x[4] for x in self.cycle)

    def mean_throughput(self) -> float:
        return self.p["mu_f"] if self.converges else self.cycle_pk / self.cycle_t

    def time_to_send(self, packets: float) -> float:
        if packets <= self.first_pk:
            return _within(self.first, packets, self.p)
        rest = packets - self.first_pk
        t = self.first_t
        if self.converges:
            return t + rest / self.p["mu_f"]
        t += self.dead
        n = math.floor(rest / self.cycle_pk)
        if n and rest - n * self.cycle_pk <= 0:
            n -= 1
        return t + n * self.cycle_t + _within(self.cycle, rest - n * self.cycle_pk, self.p)


def _trajectory(tcp: str, kw: dict[str, Any]) -> _Trajectory:
    check_choice("tcp", tcp, _TCPS)
    link = {k: float(v) for k, v in zip(_LINK, _link(*(kw[k] for k in _LINK)), strict=True)}
    a, b = float(check_nonnegative("alpha", kw["alpha"])), float(check_nonnegative("beta", kw["beta"]))
    dead = float(check_nonnegative("dead_time", kw["dead_time"]))
    ssth = kw["initial_ssth"]
    if ssth is not None:
        ssth = float(ssth)
        if not ssth > 0:
            raise ValueError(f"initial_ssth must be > 0 packets or math.inf (got {ssth:g})")
    return _Trajectory(tcp, link, a, b, vegas_form=kw["vegas_form"], burst_index=kw["burst_index"],
                       initial_ssth=ssth, dead_time=dead)


_DEFAULTS: dict[str, Any] = {**TABLE_5_1, "alpha": 2.0, "beta": 4.0, "vegas_form": "printed",
                             "burst_index": "round-robin", "initial_ssth": None, "dead_time": 0.0}


def mean_throughput(tcp: str = "tahoe", **params: Any) -> Any:
    r"""Mean throughput [packets/s] of a greedy transfer (Eq 5.8), vectorised over the link parameters.

    Tahoe, and Vegas in Case 2': one cycle runs from cwnd = 1 (slow start, then
    congestion avoidance from ssth = W_max/2) up to W_max (resolution hasegawa:A33: no recovery
    time unless ``dead_time`` [s] is given), and :math:`\bar\rho = \frac1T\int_0^T\rho\,dt`.
    Vegas in Case 1' converges without loss: :math:`\bar\rho = \mu_f`.

    Keyword parameters (Table 5.1 defaults): ``mu_f``, ``mu_r`` [packets/s], ``tau_f``,
    ``tau_r`` [s], ``b_f``, ``b_r`` [packets], ``alpha``, ``beta`` [packets],
    ``vegas_form``, ``burst_index`` (see :func:`vegas_wmax`, :func:`burst_wmax`),
    ``dead_time`` [s].

    >>> round(mean_throughput("tahoe"))  # Table 5.1 (mu_f = 4000 packets/s)
    3957
    >>> mean_throughput("vegas")
    4000.0
    """
    kw = _params(params)
    return _vectorised(kw, lambda one: _trajectory(tcp, one).mean_throughput())


def transfer_time(size: ArrayLike, tcp: str = "tahoe", **params: Any) -> Any:
    r"""Time [s] to deliver a document of ``size`` packets from cwnd = 1 (Eq 5.10).

    Solves :math:`\int_0^{T}\rho(t)\,dt = S` along the fluid trajectory: a first cycle
    from cwnd = 1 with slow-start threshold ``initial_ssth`` (default W_max/2, the
    steady cycle; ``math.inf`` slow-starts up to the first loss), then identical cycles
    (Tahoe, Vegas Case 2') or the full rate :math:`\mu_f` once Vegas reaches W_max
    (Case 1'). Link parameters as in :func:`mean_throughput`.

    >>> round(transfer_time(1, "tahoe") * 1e3, 3)  # fluid slow start: rtt ln 2 + capped part
    2.253
    """
    s = check_nonnegative("size", size)
    kw = _params(params)
    kw["size"] = s
    return _vectorised(kw, lambda one: _trajectory(tcp, one).time_to_send(float(one["size"])))


def http_transfer_delay(
    size: ArrayLike, tcp: str = "tahoe", *, http: float = 1.0, document: ArrayLike = 1, **params: Any
) -> Any:
    r"""Total delay [s] of one document (Eq 5.11): :math:`T_{setup} + T_{transfer}`.

    :math:`T_{setup}` is Eq 5.1 with the empty-buffer rtt (5.4); :math:`T_{transfer}` is
    :func:`transfer_time`. Every transfer restarts from cwnd = 1, HTTP/1.1 included
    (resolution hasegawa:A35; see :func:`http_session_delay` for the persistent-window option).

    >>> round(http_transfer_delay(10, "tahoe") * 1e3, 2)  # 1.5 rtt + 8.39 ms, Table 5.1
    13.26
    """
    kw = _params(params)
    rtt = asym_rtt(kw["mu_f"], kw["mu_r"], kw["tau_f"], kw["tau_r"])
    return out(as_float(setup_time(rtt, http=http, document=document)) + as_float(transfer_time(size, tcp, **params)))


def http_session_delay(
    sizes: Sequence[float], tcp: str = "tahoe", *, http: float = 1.0, keep_cwnd: bool = False, **params: Any
) -> float:
    r"""Total delay [s] of consecutive documents from one client (Fig 5.6), scalar parameters.

    HTTP/1.0 pays :math:`\frac32 rtt` per document, HTTP/1.1 :math:`\frac32 rtt` for the
    first and :math:`\frac12 rtt` for the others (Eq 5.1). Each transfer restarts at
    cwnd = 1 (hasegawa:A35); ``keep_cwnd=True`` (HTTP/1.1 only) lets the persistent connection
    carry on along one trajectory instead.

    >>> docs = [100] + [10] * 4  # Fig 5.6: a 100 Kbyte page, then 10 Kbyte documents
    >>> http_session_delay(docs, http=1.1) < http_session_delay(docs, http=1.0)
    True
    """
    _check_http(http)
    s = check_nonnegative("sizes", list(sizes))
    if s.ndim != 1 or s.size == 0:
        raise ValueError("sizes must be a non-empty sequence of document sizes in packets")
    if keep_cwnd and http != 1.1:
        raise ValueError("keep_cwnd applies to HTTP/1.1 only (http=1.1)")
    kw = _params(params)
    if any(np.ndim(kw[k]) for k in _LINK):
        raise ValueError("http_session_delay takes scalar link parameters")
    traj = _trajectory(tcp, kw)
    rtt = traj.p["rtt"]
    setup = float(np.sum(as_float(setup_time(rtt, http=http, document=np.arange(1, s.size + 1)))))
    if keep_cwnd:
        return setup + traj.time_to_send(float(np.sum(s)))
    return setup + sum(traj.time_to_send(float(x)) for x in s)


def mean_document_delay(
    tcp: str = "tahoe",
    *,
    http: float = 1.0,
    documents_per_session: int = 10,
    table: Sequence[tuple[float, float]] = TABLE_5_2,
    **params: Any,
) -> Any:
    r"""Mean delay [s] per document over the Table 5.2 mix (Fig 5.7), vectorised over the link.

    The expectation of Eq 5.11 over the sizes of ``table`` (Kbyte = packets; hasegawa:A39 splits
    each group equally). For HTTP/1.1 the set-up is averaged over a session of
    ``documents_per_session`` documents (one full handshake, the rest 0.5 rtt; hasegawa:A40).

    >>> t10 = mean_document_delay("tahoe")
    >>> t11 = mean_document_delay("tahoe", http=1.1)
    >>> round((t10 - t11) * 1e3, 3)  # 0.9 rtt saved per document on average
    2.925
    """
    _check_http(http)
    n = int(documents_per_session)
    if n < 1 or n != documents_per_session:
        raise ValueError(f"documents_per_session must be a whole number >= 1 (got {documents_per_session!r})")
    sizes = check_nonnegative("table sizes", [s for s, _ in table])
    probs = check_nonnegative("table probabilities", [p for _, p in table])
    if not math.isclose(float(np.sum(probs)), 1.0, rel_tol=1e-9):
        raise ValueError(f"table probabilities must add up to 1 (got {float(np.sum(probs)):g})")
    kw = _params(params)
    rtt = as_float(asym_rtt(kw["mu_f"], kw["mu_r"], kw["tau_f"], kw["tau_r"]))
    setup = 1.5 * rtt if http == 1.0 else (1.5 + 0.5 * (n - 1)) / n * rtt
    transfer = sum(p * as_float(transfer_time(s, tcp, **params)) for s, p in zip(sizes, probs, strict=True))
    return out(setup + transfer)


# --- helpers -------------------------------------------------------------------------------


def _link(*values: ArrayLike) -> list[np.ndarray]:
    mf, mr, tf, tr, bf, br = values
    return [
        check_positive("mu_f", mf),
        check_positive("mu_r", mr),
        check_nonnegative("tau_f", tf),
        check_nonnegative("tau_r", tr),
        check_nonnegative("b_f", bf),
        check_nonnegative("b_r", br),
    ]


def _check_http(http: float) -> None:
    if http not in (1.0, 1.1):
        raise ValueError(f"http must be 1.0 or 1.1 (got {http!r})")


def _params(params: dict[str, Any]) -> dict[str, Any]:
    unknown = set(params) - set(_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}; allowed: {', '.join(_DEFAULTS)}")
    kw = {**_DEFAULTS, **params}
    check_choice("vegas_form", kw["vegas_form"], ("printed", "consistent"))
    check_choice("burst_index", kw["burst_index"], ("round-robin", "thesis"))
    return kw


def _vectorised(kw: dict[str, Any], fn: Any) -> Any:
    """Apply ``fn`` to each broadcast point of the numeric parameters in ``kw``."""
    numeric = [k for k in (*_LINK, "alpha", "beta", "dead_time", "size") if k in kw]
    arrays = np.broadcast_arrays(*(as_float(kw[k]) for k in numeric))
    res = np.empty(arrays[0].shape)
    for idx in np.ndindex(res.shape):
        one = dict(kw)
        one.update({k: float(a[idx]) for k, a in zip(numeric, arrays, strict=True)})
        res[idx] = fn(one)
    return out(res)
