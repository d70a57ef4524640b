"""Load scenarios and build them from Python.

A scenario is the document described in ``docs/scenarios.md``: a TOML or JSON file, or the
same structure as a Python ``dict``. :func:`load_scenario` hands it to the Rust loader, which
validates it and fills in every default; the builders below only assemble plain dicts in that
format and leave every check to the loader, so a mistake gets the same one-line error whether
it comes from a file, the CLI or Python.

Examples
--------
>>> from flowshare import scenario as sc
>>> scn = sc.dumbbell(
...     bottleneck=sc.link(rate="10Mbps", delay="20ms", queue=sc.droptail(limit=50)),
...     access=sc.link(rate="100Mbps", delay="1ms"),
...     flows=sc.flows(count=4, name="bulk", tcp={"recovery": "sack"}),
...     duration="10s",
... )
>>> scn["topology"]["bottleneck"]
{'rate': '10Mbps', 'delay': '20ms', 'queue': {'kind': 'droptail', 'limit': 50}}
>>> scn["flows"]
[{'name': 'bulk', 'count': 4, 'tcp': {'recovery': 'sack'}}]
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from . import _core
from ._core import ConfigError
from ._files import read_document_text

__all__ = [
    "ConfigError",
    "cbr",
    "change",
    "describe",
    "droptail",
    "drr",
    "dumbbell",
    "enhanced_red",
    "enhanced_red_for",
    "epd",
    "fq_codel",
    "flows",
    "graph",
    "lan",
    "link",
    "load_scenario",
    "on_off",
    "parking_lot",
    "poisson",
    "priority",
    "qclass",
    "red",
    "to_json",
    "udp",
    "vbr",
]

Source = str | os.PathLike[str] | Mapping[str, Any]
"""What :func:`load_scenario` accepts: a path to a ``.toml`` or ``.json`` file, or a mapping."""

def load_scenario(source: Source) -> dict[str, Any]:
    """Validate a scenario and return it normalized, with every default filled in.

    Parameters
    ----------
    source : str, path-like or mapping
        Path to a ``.toml`` or ``.json`` scenario file, or the scenario itself as a mapping
        (for example the output of :func:`dumbbell`).

    Returns
    -------
    dict
        The normalized scenario, as returned by the Rust loader.

    Raises
    ------
    FileNotFoundError
        If ``source`` is a path that does not exist.
    ConfigError
        If the scenario is invalid. The message is one line naming the field and what is
        allowed; for files it starts with the file name.
    """
    text, fmt, base_dir = scenario_text(source)
    try:
        normalized = _core.parse_scenario(text, fmt, base_dir)
    except ConfigError as exc:
        if isinstance(source, Mapping):
            raise
        raise type(exc)(f"{source}: {exc}") from None
    return _decode(normalized)


def scenario_text(source: Source) -> tuple[str, str, str | None]:
    """The text of a scenario, its format (``"toml"`` or ``"json"``) and the directory its
    relative file names (trace files) are read from, without validating it.

    A mapping becomes JSON, its files relative to the working directory; a path is read
    (``.toml`` or ``.json``), its files relative to its own directory.

    Raises
    ------
    FileNotFoundError
        If ``source`` is a path that does not exist.
    TypeError
        If ``source`` is neither a path nor a mapping.
    """
    if isinstance(source, Mapping):
        return to_json(source), "json", None
    if not isinstance(source, str | os.PathLike):
        raise TypeError(
            f"scenario must be a path or a mapping, not {type(source).__name__}"
        )
    path = Path(source)
    text, fmt = read_document_text(path, "scenario")
    return text, fmt, os.fspath(path.parent)


def _decode(normalized: str) -> dict[str, Any]:
    scenario: dict[str, Any] = json.loads(normalized)
    return scenario


def to_json(scenario: Mapping[str, Any]) -> str:
    """Serialize a scenario mapping to the JSON text the Rust loader reads.

    Tuples become lists. Values JSON cannot represent (non-finite floats, arbitrary objects,
    mappings nested too deeply, strings that are not Unicode text) raise :class:`ConfigError`
    naming the offending value.
    """
    try:
        text = json.dumps(scenario, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"scenario is not representable as JSON: {exc}") from None
    except RecursionError:
        raise ConfigError(
            "scenario is not representable as JSON: mappings or lists nested too deeply"
        ) from None
    if not text.isascii() and not _is_text(text):
        raise ConfigError(_not_text_message(scenario))
    return text


def _is_text(s: str) -> bool:
    """Whether ``s`` is Unicode text, which UTF-8 can encode: not so if it holds a lone
    surrogate, as ``os.fsdecode`` makes of a byte that is not UTF-8."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _not_text_message(scenario: Mapping[str, Any]) -> str:
    """One line naming the first key or string value of ``scenario`` that is not text."""

    def shown(s: str) -> str:
        return s if s.isprintable() and _is_text(s) else ascii(s)[1:-1]

    stack: list[tuple[str, Any]] = [("", scenario)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str) and not _is_text(value):
            text = ascii(value[:40] + ("..." if len(value) > 40 else ""))
            return f"{path}: not Unicode text (a lone surrogate): {text}"
        children: list[tuple[str, Any]] = []
        if isinstance(value, Mapping):
            for key, item in value.items():
                where = f"{path}.{shown(str(key))}" if path else shown(str(key))
                if isinstance(key, str) and not _is_text(key):
                    return f"{where}: a key that is not Unicode text (a lone surrogate)"
                children.append((where, item))
        elif isinstance(value, list | tuple):
            children = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
        stack.extend(reversed(children))
    return "scenario is not representable as JSON: it holds text that is not Unicode"


def describe(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Count the flows and full-duplex links of a normalized scenario.

    Access links count too: in a dumbbell or parking lot every flow has one at each end. A
    graph's LANs count as links.

    Parameters
    ----------
    scenario : mapping
        A normalized scenario, as returned by :func:`load_scenario`.

    Returns
    -------
    dict
        ``{"topology": str, "flows": int, "links": int | None}``; ``links`` is ``None`` for a
        topology kind this function does not know.
    """
    groups = scenario.get("flows") or []
    n_flows = sum(int(g.get("count", 1)) for g in groups)
    topo = scenario.get("topology") or {}
    kind = topo.get("kind")
    links: int | None
    if kind == "dumbbell":
        links = 1 + 2 * n_flows
    elif kind == "parking_lot":
        links = int(topo["routers"]) - 1 + 2 * n_flows
    elif kind == "graph":
        links = len(topo.get("links") or []) + len(topo.get("lans") or [])
    else:
        links = None
    return {"topology": kind, "flows": n_flows, "links": links}


# ---------------------------------------------------------------------------------------------
# Builders. Each returns a plain dict in the scenario format; keys left as ``None`` are omitted
# so the Rust loader fills in its documented default.


def _drop_none(**items: Any) -> dict[str, Any]:
    return {k: v for k, v in items.items() if v is not None}


def droptail(*, limit: int | str) -> dict[str, Any]:
    """A DropTail queue.

    Parameters
    ----------
    limit : int or str
        Capacity in packets (a number) or in bytes (a size string such as ``"375000B"``). It
        counts every packet held by the link, including the one being transmitted.

    Returns
    -------
    dict
        ``{"kind": "droptail", "limit": limit}``.
    """
    return {"kind": "droptail", "limit": limit}


def red(
    *,
    limit: int | str | None = None,
    min_th: float | Literal["auto"] | None = None,
    max_th: float | Literal["auto"] | None = None,
    max_p: float | None = None,
    w_q: float | Literal["auto"] | None = None,
    gentle: bool | None = None,
    wait: bool | None = None,
    mode: Literal["packets", "bytes"] | None = None,
    mean_pktsize: str | None = None,
    adaptive: bool | None = None,
    target_delay: str | None = None,
    ecn: bool | None = None,
    mark_p: float | None = None,
) -> dict[str, Any]:
    """A FIFO with Random Early Detection (S. Floyd and V. Jacobson, "Random Early Detection
    Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993).

    Omitted fields take ns-2.35's defaults (``docs/queues.md``: ``min_th`` and ``max_th``
    ``"auto"``, ``max_p`` 0.1, ``w_q`` ``"auto"``, gentle, byte mode with ``mean_pktsize``
    ``"500B"``). Thresholds are packets (numbers); ``mean_pktsize`` a size and
    ``target_delay`` a time, with units.

    >>> red(limit=250, min_th=5, max_th=15, max_p=0.1, w_q=0.002, mode="packets")
    {'kind': 'red', 'limit': 250, 'min_th': 5, 'max_th': 15, 'max_p': 0.1, 'w_q': 0.002, 'mode': 'packets'}
    """
    return _drop_none(
        kind="red",
        limit=limit,
        min_th=min_th,
        max_th=max_th,
        max_p=max_p,
        w_q=w_q,
        gentle=gentle,
        wait=wait,
        mode=mode,
        mean_pktsize=mean_pktsize,
        adaptive=adaptive,
        target_delay=target_delay,
        ecn=ecn,
        mark_p=mark_p,
    )


def cbr(
    *,
    rate: str | None = None,
    schedule: Sequence[Sequence[str]] | None = None,
    packet_size: str | None = None,
    header: str | None = None,
    jitter: str | None = None,
) -> dict[str, Any]:
    """A constant-bit-rate UDP source (``docs/traffic.md``), for :func:`udp` or
    ``flows(transport="udp", source=...)``.

    ``rate`` is the payload rate with its unit (``"10Mbps"``, ``"10 Mbit/s"``); ``schedule`` a
    list of ``[time, rate]`` steps or ``[time, rate, "ramp"]`` ramps; ``packet_size`` and
    ``header`` sizes (defaults ``"1000B"`` and ``"28B"``); ``jitter`` a time.

    >>> cbr(rate="2Mbps", packet_size="1000B")
    {'kind': 'cbr', 'packet_size': '1000B', 'rate': '2Mbps'}
    """
    return _drop_none(
        kind="cbr",
        packet_size=packet_size,
        header=header,
        rate=rate,
        schedule=None if schedule is None else [list(p) for p in schedule],
        jitter=jitter,
    )


def poisson(
    *,
    rate: str | None = None,
    schedule: Sequence[Sequence[str]] | None = None,
    packet_size: str | None = None,
    header: str | None = None,
    jitter: str | None = None,
) -> dict[str, Any]:
    """A UDP source with exponential gaps of mean ``packet_size · 8 / rate`` (``docs/traffic.md``).

    >>> poisson(rate="1Mbps")
    {'kind': 'poisson', 'rate': '1Mbps'}
    """
    return {**cbr(rate=rate, schedule=schedule, packet_size=packet_size, header=header, jitter=jitter),
            "kind": "poisson"}


def on_off(
    *,
    rate: str,
    on: str | None = None,
    off: str | None = None,
    periods: Literal["exponential", "pareto"] | None = None,
    shape: float | None = None,
    packet_size: str | None = None,
    header: str | None = None,
    jitter: str | None = None,
) -> dict[str, Any]:
    """An on/off UDP source: CBR at ``rate`` during on periods (mean ``on``, default
    ``"500ms"``), silent during off periods (mean ``off``); ``periods`` exponential (default)
    or Pareto with ``shape`` (``docs/traffic.md``).

    >>> on_off(rate="4Mbps", on="200ms", off="800ms", periods="pareto", shape=1.4)
    {'kind': 'on_off', 'rate': '4Mbps', 'on': '200ms', 'off': '800ms', 'periods': 'pareto', 'shape': 1.4}
    """
    return _drop_none(
        kind="on_off",
        packet_size=packet_size,
        header=header,
        rate=rate,
        on=on,
        off=off,
        periods=periods,
        shape=shape,
        jitter=jitter,
    )


def vbr(
    *,
    rate: str,
    peak: str,
    fps: float | None = None,
    gop: str | None = None,
    pb_ratio: float | None = None,
    variation: float | None = None,
    spread: bool | None = None,
    packet_size: str | None = None,
    header: str | None = None,
    jitter: str | None = None,
) -> dict[str, Any]:
    """An MPEG-like video source: frames at ``fps`` (default 30) in a group-of-pictures
    pattern, mean payload rate ``rate`` and peak ``peak`` (``docs/traffic.md``).

    >>> vbr(rate="4.5Mbps", peak="14.84Mbps")
    {'kind': 'vbr', 'rate': '4.5Mbps', 'peak': '14.84Mbps'}
    """
    return _drop_none(
        kind="vbr",
        packet_size=packet_size,
        header=header,
        rate=rate,
        peak=peak,
        fps=fps,
        gop=gop,
        pb_ratio=pb_ratio,
        variation=variation,
        spread=spread,
        jitter=jitter,
    )


def udp(source: Mapping[str, Any], **group: Any) -> dict[str, Any]:
    """A UDP flow group sending ``source`` (:func:`cbr`, :func:`poisson`, :func:`on_off` or
    :func:`vbr`); ``group`` takes the other arguments of :func:`flows` (``name``, ``count``,
    ``start``, ...).

    >>> udp(cbr(rate="5Mbps"), name="video", start="1s")
    {'name': 'video', 'start': '1s', 'transport': 'udp', 'source': {'kind': 'cbr', 'rate': '5Mbps'}}
    """
    if "transport" in group or "source" in group or "tcp" in group:
        raise TypeError("udp(): transport, source and tcp are set by udp() itself")
    return flows(transport="udp", source=source, **group)


def qclass(
    *flow_groups: str,
    limit: int | str | None = None,
    quantum: int | str | None = None,
) -> dict[str, Any]:
    """A class of a :func:`priority` queue or a queue of a :func:`drr`.

    ``flow_groups`` are the names of the flow groups whose flows it holds; ``limit`` its own
    limit (packets or a size string); ``quantum`` (DRR only) its quantum, a size string or a
    number of packets of the queue's ``mean_pktsize``.

    >>> qclass("vbr", limit=50)
    {'flows': ['vbr'], 'limit': 50}
    """
    return _drop_none(flows=list(flow_groups), limit=limit, quantum=quantum)


def priority(classes: Sequence[Mapping[str, Any]], *, limit: int | str | None = None) -> dict[str, Any]:
    """A strict-priority queue: ``classes`` (see :func:`qclass`), highest priority first.

    Flows of groups no class names go to the last class. ``limit`` is the shared limit on the
    waiting packets (``docs/queues.md``).

    >>> priority([qclass("vbr", limit=50), qclass("data", limit=100)], limit=150)["classes"][0]
    {'flows': ['vbr'], 'limit': 50}
    """
    return _drop_none(kind="priority", limit=limit, classes=[dict(c) for c in classes])


def drr(
    *,
    limit: int | str | None = None,
    quantum: int | str | None = None,
    queues: Sequence[Mapping[str, Any]] | None = None,
    mean_pktsize: str | None = None,
    overflow: Literal["drop_arrival", "push_out_longest"] | None = None,
    aqm: Literal["none", "red", "enhanced_red"] | None = None,
    **aqm_params: Any,
) -> dict[str, Any]:
    """A deficit-round-robin queue; with ``aqm``, DRR+ (``docs/queues.md``).

    Without ``queues`` every flow has its own queue. ``aqm_params`` are the RED or enhanced-RED
    fields of each queue (``min_th``, ``max_th``, ``w_q``, ``max_p``, ``flow_p``, ...).

    >>> drr(limit=60, queues=[qclass("a", "b", quantum="3000B")], aqm="enhanced_red", flow_p={"a": 0.1})
    {'kind': 'drr', 'limit': 60, 'queues': [{'flows': ['a', 'b'], 'quantum': '3000B'}], 'aqm': 'enhanced_red', 'flow_p': {'a': 0.1}}
    """
    return _drop_none(
        kind="drr",
        limit=limit,
        quantum=quantum,
        queues=None if queues is None else [dict(q) for q in queues],
        mean_pktsize=mean_pktsize,
        overflow=overflow,
        aqm=aqm,
        **aqm_params,
    )


def epd(
    *,
    limit: int,
    threshold: int | None = None,
    accounting: bool | None = None,
    ppd: bool | None = None,
) -> dict[str, Any]:
    """A FIFO of ATM cells discarding whole frames, for links with ``cells = True``
    (``docs/queues.md``, "Frame discard at ATM cell queues").

    ``limit`` and ``threshold`` count cells (``threshold`` defaults to half the limit: early
    packet discard); ``accounting`` gives EPD/A, ``ppd`` partial packet discard.

    >>> epd(limit=5800, accounting=True)
    {'kind': 'epd', 'limit': 5800, 'accounting': True}
    """
    return _drop_none(kind="epd", limit=limit, threshold=threshold, accounting=accounting, ppd=ppd)


def enhanced_red(
    *,
    limit: int | str | None = None,
    min_th: float | None = None,
    max_th: float | None = None,
    w_q: float | None = None,
    max_p: float | None = None,
    flow_p: Mapping[str, float] | None = None,
    ramp: bool | None = None,
    mean_pktsize: str | None = None,
) -> dict[str, Any]:
    """A FIFO with enhanced RED: drop probability ``flow_p[group]`` per flow group between the
    thresholds, ``max_p`` for unlisted groups (Hasegawa (2000) §6.2.2; defaults 5, 15, 0.002,
    0.02).

    >>> enhanced_red(limit=30, flow_p={"slow": 0.1})
    {'kind': 'enhanced_red', 'limit': 30, 'flow_p': {'slow': 0.1}}
    """
    return _drop_none(
        kind="enhanced_red",
        limit=limit,
        min_th=min_th,
        max_th=max_th,
        w_q=w_q,
        max_p=max_p,
        flow_p=None if flow_p is None else {k: float(v) for k, v in flow_p.items()},
        ramp=ramp,
        mean_pktsize=mean_pktsize,
    )


def enhanced_red_for(
    bw: Mapping[str, float],
    BW: float,  # noqa: N803
    *,
    queue: Mapping[str, Any] | None = None,
    **model: Any,
) -> dict[str, Any]:
    """Put enhanced RED's per-group drop probabilities, computed with the thesis's iteration
    (:func:`flowshare.models.hasegawa.enhanced_red_probabilities`), into a queue.

    ``bw`` maps each flow group's name to its input capacity (bit/s) and ``BW`` is the
    bottleneck rate (bit/s); ``model`` goes to the iteration (``tau``, ``packet_bytes``, ...).
    ``queue`` is an :func:`enhanced_red` or DRR+ (:func:`drr` with ``aqm="enhanced_red"``)
    queue to fill (default: ``enhanced_red(limit=30)``); its ``flow_p`` is replaced. Raises
    ``ValueError`` when the iteration does not converge.

    >>> q = enhanced_red_for({"bw64": 64e3, "bw128": 128e3, "bw256": 256e3, "bw512": 512e3}, 800e3)
    >>> q["kind"], {k: round(v, 4) for k, v in q["flow_p"].items()}
    ('enhanced_red', {'bw64': 0.1791, 'bw128': 0.091, 'bw256': 0.0278, 'bw512': 0.0077})
    """
    import warnings

    from .models.hasegawa import enhanced_red_probabilities

    names = list(bw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = enhanced_red_probabilities([float(bw[n]) for n in names], float(BW), **model)
    if not res.converged:
        raise ValueError(f"enhanced RED's iteration did not converge in {res.iterations} iterations")
    out = dict(queue) if queue is not None else enhanced_red(limit=30)
    if out.get("kind") == "drr" and out.get("aqm") != "enhanced_red":
        raise ValueError("queue: a DRR needs aqm='enhanced_red' to use per-group probabilities")
    if out.get("kind") not in ("enhanced_red", "drr"):
        raise ValueError(f"queue: kind must be 'enhanced_red' or 'drr', got {out.get('kind')!r}")
    out["flow_p"] = {n: float(p) for n, p in zip(names, res.p, strict=True)}
    return out


def fq_codel(
    *,
    limit: int | None = None,
    quantum: str | None = None,
    target: str | None = None,
    interval: str | None = None,
    buckets: int | None = None,
) -> dict[str, Any]:
    """An FQ-CoDel queue (RFC 8290; defaults 1514B, 5ms, 100ms, one queue per flow).

    >>> fq_codel(limit=10240)
    {'kind': 'fq_codel', 'limit': 10240}
    """
    return _drop_none(kind="fq_codel", limit=limit, quantum=quantum, target=target, interval=interval, buckets=buckets)


def link(
    *,
    rate: str,
    delay: str,
    queue: Mapping[str, Any] | None = None,
    loss: Mapping[str, Any] | None = None,
    reverse: Mapping[str, Any] | None = None,
    from_: str | None = None,
    to: str | None = None,
) -> dict[str, Any]:
    """A full-duplex link; each direction has its own transmitter and queue.

    Parameters
    ----------
    rate : str
        Transmission rate with its unit, e.g. ``"100Mbps"`` or ``"100 Mbit/s"`` (a bare
        number is refused, see ``docs/scenarios.md``, "Units").
    delay : str
        One-way propagation delay with its unit, e.g. ``"20ms"``.
    queue : mapping, optional
        Queue of each direction, e.g. ``droptail(limit=250)``. Default: DropTail, 100 packets.
    loss : mapping, optional
        Loss model of the forward direction, e.g. ``{"model": "bernoulli", "p": 0.01}``
        (models and the direction convention: ``docs/links.md``).
    reverse : mapping, optional
        How the reverse direction differs: any of ``rate``, ``delay``, ``queue``, ``loss``,
        e.g. ``{"rate": "64Kbps", "queue": droptail(limit=5)}``.
    from_, to : str, optional
        End nodes, for the links of a :func:`graph` topology only (``from`` in the file).

    Returns
    -------
    dict
        The link entry.
    """
    entry = _drop_none(
        rate=rate, delay=delay, queue=_plain(queue), loss=_plain(loss), reverse=_plain(reverse)
    )
    ends = _drop_none(**{"from": from_, "to": to})
    return {**ends, **entry}


def lan(
    *,
    name: str,
    nodes: Sequence[str],
    rate: str,
    delay: str,
    queue: Mapping[str, Any] | None = None,
    queues: Mapping[str, Mapping[str, Any]] | None = None,
    loss: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A shared-medium LAN of a :func:`graph` topology.

    One half-duplex channel of ``rate`` and ``delay`` that every station and both directions
    share, served first come first served; each station has its own interface queue
    (``docs/links.md``).

    Parameters
    ----------
    name : str
        Unique name, used in the results, trace selectors and :func:`change`.
    nodes : sequence of str
        The stations (at least two graph nodes).
    rate : str
        Capacity of the channel, e.g. ``"10Mbps"``.
    delay : str
        Propagation delay between any two stations, e.g. ``"0.5us"``.
    queue : mapping, optional
        Each station's queue, e.g. ``droptail(limit=50)``. Default: DropTail, 100 packets.
    queues : mapping, optional
        Per-station queues that differ, by node name, e.g. ``{"r2": droptail(limit=20)}``.
    loss : mapping, optional
        Loss model of every station's transmissions, each station with its own random
        stream, e.g. ``{"model": "bernoulli", "p": 0.05}``.

    Returns
    -------
    dict
        The LAN entry (for ``graph(lans=[...])``).
    """
    return _drop_none(
        name=name,
        nodes=list(nodes),
        rate=rate,
        delay=delay,
        queue=_plain(queue),
        queues=_plain(queues),
        loss=_plain(loss),
    )


def change(
    *,
    at: str,
    link: str,
    direction: Literal["forward", "reverse", "both"] | None = None,
    rate: str | None = None,
    delay: str | None = None,
    up: bool | None = None,
) -> dict[str, Any]:
    """A change of a link or LAN at a given time (one ``[[changes]]`` table).

    Parameters
    ----------
    at : str
        Simulated time of the change, within the run.
    link : str
        Name of the link or LAN (``"bottleneck"`` in a dumbbell).
    direction : {"forward", "reverse", "both"}, optional
        Point-to-point links only: which directions change (default both).
    rate, delay : str, optional
        New rate or propagation delay, for packets accepted from then on.
    up : bool, optional
        ``False`` takes the link down (packets on it are lost, routes avoid it), ``True``
        brings it back; either way every route is recomputed.

    Returns
    -------
    dict
        The change entry (for the builders' ``changes=[...]``).
    """
    return _drop_none(at=at, link=link, direction=direction, rate=rate, delay=delay, up=up)


def flows(
    *,
    count: int | None = None,
    name: str | None = None,
    start: str | None = None,
    start_spacing: str | None = None,
    start_jitter: str | None = None,
    stop: str | None = None,
    size: str | int | None = None,
    tcp: Mapping[str, Any] | None = None,
    direction: str | None = None,
    rtt: str | None = None,
    src_access: Mapping[str, Any] | None = None,
    dst_access: Mapping[str, Any] | None = None,
    from_: int | None = None,
    to: int | None = None,
    src: str | None = None,
    dst: str | None = None,
    transport: str | None = None,
    source: Mapping[str, Any] | None = None,
    tfrc: Mapping[str, Any] | None = None,
    aggregate: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One flow group (one ``[[flows]]`` table).

    Parameters
    ----------
    count : int, optional
        Number of flows in the group (default 1).
    name : str, optional
        Label in the results (default ``"flow"``).
    start : str, optional
        Start of the group's first flow (default 0).
    start_spacing : str, optional
        Each further flow of the group starts this much later (default 0).
    start_jitter : str, optional
        Each flow starts a random time in ``[0, start_jitter]`` after its spaced start, drawn
        from the seed, so that replications differ (``docs/statistics.md``).
    stop : str, optional
        No new data after this time.
    size : str or int, optional
        A finite transfer per flow, e.g. ``"1MB"``; omitted means bulk (unlimited) data.
    tcp : mapping, optional
        Transport options (``recovery``, ``cc``, ``mss``, ...; see ``docs/scenarios.md``),
        including ``ensemble``, a common controller for the connections of one sending host to
        one receiver network, e.g. ``{"initial_ssthresh": 44, "ensemble": {"controller":
        "efcm"}}`` (``docs/algorithms.md``, "efcm"), or state shared at open with
        ``"tcb"`` or ``"etcp"`` (``docs/algorithms.md``, "tcb, etcp").
    direction : {"forward", "reverse"}, optional
        Dumbbell only: ``forward`` (default) sends from the ``r0`` side to the ``r1`` side.
    rtt : str, optional
        Dumbbell only: the base RTT of each flow's path (its two-way propagation delay),
        e.g. ``"80ms"``; the access delays are derived from it (``docs/rtt.md``).
    src_access, dst_access : mapping, optional
        Dumbbell and parking lot: per-flow override of the sender's or receiver's access
        link, e.g. ``{"delay": "10ms"}``.
    from_, to : int, optional
        Parking lot only: routers where the flows enter and leave (``from`` in the file;
        defaults: the two ends of the chain).
    src, dst : str, optional
        Graph only: end nodes of the flows.
    transport : {"tcp", "udp", "tfrc"}, optional
        ``tcp`` (default); ``udp``: the flows send the packets of ``source`` without
        congestion control or acknowledgements; ``tfrc``: TCP-Friendly Rate Control
        (RFC 5348, ``docs/tfrc.md``).
    source : mapping, optional
        UDP only: the traffic source, e.g. ``{"kind": "cbr", "rate": "10Mbps"}`` or
        ``{"kind": "vbr", "rate": "4.5Mbps", "peak": "14.84Mbps"}`` (see ``docs/traffic.md``).
    tfrc : mapping, optional
        TFRC only: its options, e.g. ``{"packet_size": "1000B", "profile": "ns2"}`` (see
        ``docs/tfrc.md``).
    aggregate : mapping, optional
        With ``tcp.cc`` ``pamultcp`` or ``mpat``: members joining the aggregate at run time,
        e.g. ``{"joins": [{"at": "50s", "size": "30KB"}]}`` (``docs/scenarios.md``); they are
        reported in :attr:`RunResult.members`.

    Returns
    -------
    dict
        The flow group entry.
    """
    return _drop_none(
        name=name,
        count=count,
        start=start,
        start_spacing=start_spacing,
        start_jitter=start_jitter,
        stop=stop,
        size=size,
        direction=direction,
        rtt=rtt,
        src_access=_plain(src_access),
        dst_access=_plain(dst_access),
        **{"from": from_},
        to=to,
        src=src,
        dst=dst,
        tcp=_plain(tcp),
        transport=transport,
        source=_plain(source),
        tfrc=_plain(tfrc),
        aggregate=_plain(aggregate),
    )


def dumbbell(
    *,
    bottleneck: Mapping[str, Any],
    access: Mapping[str, Any],
    flows: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    duration: str,
    seed: int | None = None,
    sample_interval: str | None = None,
    changes: Sequence[Mapping[str, Any]] | None = None,
    warmup: str | float | None = None,
) -> dict[str, Any]:
    """A dumbbell scenario: routers ``r0`` and ``r1`` joined by the bottleneck.

    Each flow gets its own source and destination hosts, joined to the routers by access
    links, so per-flow access delays give per-flow RTTs.

    Parameters
    ----------
    bottleneck : mapping
        The ``r0``–``r1`` link, e.g. ``link(rate="100Mbps", delay="20ms")``.
    access : mapping
        The access links' defaults, e.g. ``link(rate="1Gbps", delay="1ms")``.
    flows : mapping or sequence of mappings
        One flow group (see :func:`flows`) or a list of them.
    duration : str
        Simulated time, e.g. ``"60s"``.
    seed : int, optional
        Master seed of every random stream (default 1).
    sample_interval : str, optional
        Time-series period (default ``"100ms"``); ``"0s"`` turns time series off.
    changes : sequence of mappings, optional
        Link changes at given times, see :func:`change`.
    warmup : str or float, optional
        Start of the steady state (default ``"0s"``): the figures over a run count from
        here (``docs/measurements.md``).

    Returns
    -------
    dict
        The scenario.
    """
    topology = {"kind": "dumbbell", "bottleneck": _plain(bottleneck), "access": _plain(access)}
    return _scenario(topology, flows, duration, seed, sample_interval, changes, warmup)


def parking_lot(
    *,
    routers: int,
    link: Mapping[str, Any],
    access: Mapping[str, Any],
    flows: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    duration: str,
    seed: int | None = None,
    sample_interval: str | None = None,
    changes: Sequence[Mapping[str, Any]] | None = None,
    warmup: str | float | None = None,
) -> dict[str, Any]:
    """A parking-lot scenario: ``routers`` routers in a chain joined by identical links.

    A flow enters at router ``from`` and leaves at router ``to`` (see :func:`flows`) through
    its own access links.

    Parameters
    ----------
    routers : int
        Number of routers in the chain ``r0 – r1 – … – r{n-1}``.
    link : mapping
        The chain links, e.g. ``link(rate="10Mbps", delay="10ms")``.
    access : mapping
        The access links' defaults.
    flows : mapping or sequence of mappings
        One flow group or a list of them.
    duration : str
        Simulated time.
    seed : int, optional
        Master seed (default 1).
    sample_interval : str, optional
        Time-series period (default ``"100ms"``).
    changes : sequence of mappings, optional
        Link changes at given times, see :func:`change`.
    warmup : str or float, optional
        Start of the steady state (default ``"0s"``).

    Returns
    -------
    dict
        The scenario.
    """
    topology = {
        "kind": "parking_lot",
        "routers": routers,
        "link": _plain(link),
        "access": _plain(access),
    }
    return _scenario(topology, flows, duration, seed, sample_interval, changes, warmup)


def graph(
    *,
    nodes: Sequence[str],
    links: Sequence[Mapping[str, Any]],
    lans: Sequence[Mapping[str, Any]] | None = None,
    flows: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    duration: str,
    seed: int | None = None,
    sample_interval: str | None = None,
    changes: Sequence[Mapping[str, Any]] | None = None,
    warmup: str | float | None = None,
) -> dict[str, Any]:
    """A scenario on an explicit graph of named nodes, full-duplex links and LANs.

    Routes are static shortest paths in hops over the links and LANs that are up; ties go to
    the link listed first, LANs after links.

    Parameters
    ----------
    nodes : sequence of str
        Node names.
    links : sequence of mappings
        Links with their end nodes, e.g. ``link(from_="a", to="b", rate="10Mbps",
        delay="5ms")``.
    lans : sequence of mappings, optional
        Shared-medium LANs, see :func:`lan`.
    flows : mapping or sequence of mappings
        One flow group or a list of them, naming their ``src`` and ``dst`` nodes.
    duration : str
        Simulated time.
    seed : int, optional
        Master seed (default 1).
    sample_interval : str, optional
        Time-series period (default ``"100ms"``).
    changes : sequence of mappings, optional
        Link changes at given times, see :func:`change`.
    warmup : str or float, optional
        Start of the steady state (default ``"0s"``).

    Returns
    -------
    dict
        The scenario.
    """
    topology: dict[str, Any] = {
        "kind": "graph",
        "nodes": list(nodes),
        "links": [_plain(entry) for entry in links],
    }
    if lans is not None:
        topology["lans"] = [_plain(entry) for entry in lans]
    return _scenario(topology, flows, duration, seed, sample_interval, changes, warmup)


def _scenario(
    topology: dict[str, Any],
    groups: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    duration: str,
    seed: int | None,
    sample_interval: str | None,
    changes: Sequence[Mapping[str, Any]] | None = None,
    warmup: str | float | None = None,
) -> dict[str, Any]:
    if isinstance(groups, Mapping):
        groups = [groups]
    simulation = _drop_none(
        duration=duration, seed=seed, sample_interval=sample_interval, warmup=warmup
    )
    scenario: dict[str, Any] = {
        "simulation": simulation,
        "topology": topology,
        "flows": [_plain(g) for g in groups],
    }
    if changes is not None:
        scenario["changes"] = [_plain(c) for c in changes]
    return scenario


def _plain(value: Any) -> Any:
    """Copy nested mappings and sequences into plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
